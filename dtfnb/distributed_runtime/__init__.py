"""The master and worker services of a task, and the transports that reach them."""
