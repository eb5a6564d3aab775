"""The Problems panel: findings of every editor's checker, and the refusal to simulate on errors."""
