"""minGPT-style utilities: a config node that holds attributes and can merge a dict."""


class CfgNode:
    """A lightweight configuration class, as minGPT's mingpt/utils.py has it."""

    def __init__(self, **kwargs):
        self.__dict__.update(kwargs)

    def merge_from_dict(self, d):
        self.__dict__.update(d)

    def to_dict(self):
        return dict(self.__dict__)
