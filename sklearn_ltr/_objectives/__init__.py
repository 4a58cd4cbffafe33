"""Training objectives. Each one lives in its own module and is registered in
``OBJECTIVES`` below."""
