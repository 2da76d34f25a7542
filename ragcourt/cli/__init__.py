"""The ``ragcourt`` command line: ``ragcourt --help`` lists the commands."""
