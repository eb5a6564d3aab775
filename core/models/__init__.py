"""Trained models (torch): SPF policies, VAP grounding and reasoning networks, and what they share (the Neural Logic
Machine). torch and torchvision are imported lazily by the modules that need them, never at studio start-up."""
