// Package helm holds the tests of hookrelay's Helm chart (hookrelay/): they
// render it with Helm's own Go library and decode every object strictly
// into the Kubernetes API's types. It is a module of its own, so that
// hookrelay's go.mod does not carry Helm and the Kubernetes client.
package helm
