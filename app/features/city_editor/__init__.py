"""The city editor mode: paint, rectangle, eyedropper and move tools, New city, resize, import and export."""
