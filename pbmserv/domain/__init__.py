"""The domain layer: accounts, boards, clocks, ratings, tournaments and notifications.

Everything stateful that the service knows, with no click and no SMTP: the commands and the
robots call it; it calls the engines, the store and the renderer.
"""
