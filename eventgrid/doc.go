// Package eventgrid holds the end-to-end tests of hookrelay's Azure Event Grid
// and Event Grid on IoT Edge mode (POLICIES.md §eventgrid, §eventgrid-edge):
// the schedules in Temporal's time-skipping environment with the real
// activities and store, output batching with a real worker and Temporal
// server, and delivery across a restart of both. The code under test lives in
// api, activities, workflows, starter and store.
package eventgrid
