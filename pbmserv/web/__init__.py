"""Read-only web pages (boards, players, game lists, tournaments): a third channel beside mail
and the shell.  It reads the store and the engines' public API and never writes; see
:mod:`pbmserv.web.app`."""
