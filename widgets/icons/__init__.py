"""The Render panel and its icon gallery."""
