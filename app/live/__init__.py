"""Live play: the room a host runs, its web server, the host screen and the player app."""
