"""The Textual app: screens and widgets that render the session store (they never own it)."""
