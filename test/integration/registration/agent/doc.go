// Package agent holds the integration tests of the registration agent against real API servers: a
// hub and a managed cluster from test/framework, with the hub controller and
// the agent run by the component runner from a freshly built ocm-controller,
// each as its shipped ServiceAccount. The test plays the hub administrator.
package agent
