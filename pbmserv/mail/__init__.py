"""The mail gateway's store-independent parts: parsing, composing, delivery and the SMTP handler."""
