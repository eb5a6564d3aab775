"""Visual Action Prediction in the studio: the predictions dock, checkpoints and dataset generation."""
