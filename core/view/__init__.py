"""Qt-free helpers of the studio's views: colours and legends, colour-by values, export ranges.

Why here and not in ``widgets/``: everything that can be decided without a screen (which colour a cell or an
agent gets, which steps an export covers) is plain data, testable without Qt and reusable by the CLI.
"""
