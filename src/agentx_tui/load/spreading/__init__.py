"""Load spread over processes or Ray actors, merged into one `ClientStats` in the main process."""
