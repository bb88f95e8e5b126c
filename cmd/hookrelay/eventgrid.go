package main

import "github.com/hookrelay/hookrelay/worker"

// workerOptions are the worker's default options with the IoT Edge defaults
// read from the environment (POLICIES.md §eventgrid-edge).
func (a *app) workerOptions() worker.Options {
	opts := worker.DefaultOptions()
	opts.EdgeDefaults = a.cfg.EdgeDefaults
	return opts
}
