"""Safe Path Following: the Gymnasium environment, episode sets, demonstrations, task rules, policies and their
evaluation, human play sessions, a policy driving a studio recording, and learning (learning/)."""
