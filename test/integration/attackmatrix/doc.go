// Package attackmatrix runs the attack matrix of the threat model
// (docs/security.md, section "Attack matrix"): each actor the product hands
// a credential to tries each write the product acts on, on a hub with the
// shipped RBAC and admission policies, and the outcome of every cell must be
// the one the table gives. The table is the only list of expectations: a
// row or actor it names without an implementation here fails, and so does
// an implementation it does not name.
//
// It also tries certificate subjects the approval policy would sign against
// the admission policies, as client certificates on the hub.
package attackmatrix
