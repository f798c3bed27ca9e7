// Package hubsession connects an agent to its hub with the hub credential
// the registration agent keeps in Secret hub-kubeconfig-secret: Run watches
// that Secret and keeps one session (whatever the agent runs against the
// hub: caches, controllers) running with its current content, replacing the
// session whenever the credential changes, as it does when the client
// certificate is rotated, and starting a new one a moment after a session
// fails. The work agent and the add-on agent meet the registration agent
// only through this Secret.
//
// Parse reads one version of the Secret by pkg/kubeconfig's hub-credential
// contract (kubeconfig.ReadHubCredential).
package hubsession
