// Package addonmanager tests the hub add-on manager's install,
// configuration and rollout controllers on a real hub, together with the
// hub registration controllers and the placement scheduler, all running as
// the shipped ocm-hub-controller ServiceAccount: the install strategies and
// cleanup by garbage collection, the precedence and spec hashes of
// configurations with the seed examples applied unchanged, and a
// progressive rollout of a configuration change over decision groups. The
// tests play the deploy controller by writing the add-on's deploy
// ManifestWork with its config-spec-hash annotation and Applied condition.
package addonmanager
