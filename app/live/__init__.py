"""Live play: the room a host runs, its server and push feed, the player page (static/), the
projector (host_app) and the terminal player."""
