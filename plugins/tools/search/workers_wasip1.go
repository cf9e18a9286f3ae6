package search

// searchWorkers is how many files grep searches at once in the WASM
// module: one. The guest has a single thread and every read blocks it, so
// more workers would only add goroutine switches and locking.
func searchWorkers() int { return 1 }
