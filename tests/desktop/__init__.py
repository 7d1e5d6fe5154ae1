"""The desktop reviewer test's machinery: an Anki add-on, the profile it runs in, and the checks (see reviewer.py)."""
