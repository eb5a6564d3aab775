"""Foundations every layer uses: the error hierarchy (errors), the codes of kinds, actions and headings (codes), the
world snapshot and agent table (world), and the torchvision import shim."""
