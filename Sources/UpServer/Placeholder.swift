// placeholder: the up-server (issue 3)
