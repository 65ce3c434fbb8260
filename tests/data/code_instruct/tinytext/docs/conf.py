project = "tinytext"
extensions = []
