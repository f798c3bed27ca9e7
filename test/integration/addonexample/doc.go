// Package addonexample tests the example add-on examples/addons/helloworld:
// its manifests, and its agent, the real helloworld-addon binary, run by the
// component runner from the Deployment its AddOnTemplate renders to, against
// a real hub and managed cluster. The test plays the parts of the hub's
// add-on manager and of the managed cluster's agents: it renders the
// template, applies it to the managed cluster, binds the add-on's hub
// permissions and writes the add-on's hub credential, as they would, so that
// every permission decision is the API servers' and the example's own RBAC.
package addonexample
