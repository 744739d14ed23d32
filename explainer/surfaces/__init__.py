"""What users run: the command line, the script and IPython hooks, the gap log."""
