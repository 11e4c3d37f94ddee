"""A throw-away third layout: one folder plus one registry line (issue 29).

``tests/unit/test_a_new_layout.py`` registers it (`register.py`, the registry line a real
layout adds to ``versioned/layouts/base.py``) and runs the table behaviour suite for it:
every behaviour must fail with `NotSupportedError`, never with a wrong answer or by falling
into another layout's code.
"""
