"""Stand-in for matplotlib: the examples only draw; nothing is drawn."""


def use(*args, **kwargs):
    """Accept a backend name and do nothing."""
