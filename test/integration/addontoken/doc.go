// Package addontoken tests the token driver of add-on registration on real
// API servers: a hub and cluster1, the hub's registration controllers and
// the add-on manager's deploy, token-infrastructure and approval
// controllers, and the add-on agent of cluster1 run in-process as the
// shipped klusterlet-agent ServiceAccount with
// --addon-kubeclient-registration-auth token. Two template add-ons, alpha
// and beta, each with its own hub permission, go from their registrations
// to a token Secret on cluster1 whose identity the hub sees as
// ServiceAccount <addon>-agent, reaching what its registration grants and
// nothing else; the token is refreshed when its ServiceAccount is
// recreated, and deleting the add-on removes its Secret.
package addontoken
