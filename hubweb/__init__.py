"""sdlc-hub HTTP adapter: Falcon resources over hublib, served by waitress."""
