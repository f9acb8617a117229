"""pbmserv: a play-by-email server for Ploy, Pylon, Plotto and Polis."""

__version__ = "0.1.0"
