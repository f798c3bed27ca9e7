package attackmatrix

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	proxyagent "github.com/kubectl-ocm/kubectl-ocm/controllers/proxy/agent"
	registrationhub "github.com/kubectl-ocm/kubectl-ocm/controllers/registration/hub"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/registration/csr"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/identityhub"
)

// concurrency bounds the cells in flight at once.
const concurrency = 16

// TestAttackMatrix runs every cell of the attack matrix of
// docs/security.md on a hub with the product's RBAC and admission
// policies as shipped and its controllers running as their
// ServiceAccount: each actor, holding only its credential, tries each
// write, and the outcome must be the cell's. Then it checks certificate
// subject forms against the approval policy and admission together
// (testSubjectForms).
func TestAttackMatrix(t *testing.T) {
	tb, err := readTable(securityDoc)
	if err != nil {
		t.Fatal(err)
	}
	if err := checkCoverage(tb); err != nil {
		t.Fatal(err)
	}
	h := identityhub.Start(t, 5*time.Minute, identityhub.Options{
		Registration: registrationhub.Options{AutoApprovedCSRUsers: []string{identity.BootstrapUser}},
	})
	s := prepare(t, h)
	actors := make([]*actor, len(tb.actors))
	for i, name := range tb.actors {
		cfg, err := s.credential(h.Ctx, name)
		kit.Must(t, "a credential of the "+name, err)
		actors[i], err = newActor(name, actorSlugs[name], cfg)
		kit.Must(t, "a client of the "+name, err)
	}
	start := time.Now()
	got := s.run(t, tb, actors)
	t.Logf("ran %d cells in %s", len(tb.rows)*len(actors), time.Since(start).Round(time.Millisecond))

	for _, tr := range tb.rows {
		t.Run(tr.write, func(t *testing.T) {
			for j, a := range tb.actors {
				if len(got.cells[tr.write][a]) == 0 {
					t.Errorf("%s × %s (docs/security.md:%d): the test tried no write", tr.write, a, tr.line)
				}
				for _, ans := range got.cells[tr.write][a] {
					switch {
					case ans.err != nil:
						t.Errorf("%s × %s (docs/security.md:%d): %s: %v", tr.write, a, tr.line, ans.what, ans.err)
					case ans.outcome != tr.cells[j]:
						t.Errorf("%s × %s (docs/security.md:%d): %s: want %s, got %s: %s", tr.write, a, tr.line, ans.what, tr.cells[j], ans.outcome, ans.detail)
					}
				}
			}
			for _, ans := range got.controls[tr.write] {
				if ans.err != nil || ans.outcome != allow {
					t.Errorf("%s: the control (%s) must be allowed, so that the write itself is sound: got %s: %v %s", tr.write, ans.what, ans.outcome, ans.err, ans.detail)
				}
			}
		})
	}
	t.Logf("the matrix as the hub answered it:\n%s", got.markdown(tb))

	t.Run("certificate subject forms", func(t *testing.T) { testSubjectForms(t, s) })
}

// answer is what one write of a cell gave.
type answer struct {
	what string
	// outcome is allow or deny; err is set instead when the write failed
	// for another reason than the actor's rights.
	outcome string
	err     error
	// detail is the API server's answer.
	detail string
}

// answers are the answers of every cell, by row and actor, and of each
// row's control.
type answers struct {
	mu       sync.Mutex
	cells    map[string]map[string][]answer
	controls map[string][]answer
}

func (g *answers) add(row, actor string, a answer) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if actor == "" {
		g.controls[row] = append(g.controls[row], a)
		return
	}
	if g.cells[row] == nil {
		g.cells[row] = map[string][]answer{}
	}
	g.cells[row][actor] = append(g.cells[row][actor], a)
}

// markdown renders the answers as the table of the threat model; a cell
// whose writes gave different answers reads "mixed".
func (g *answers) markdown(tb *table) string {
	var b strings.Builder
	fmt.Fprintf(&b, "| write | %s |\n|---%s|\n", strings.Join(tb.actors, " | "), strings.Repeat("|---", len(tb.actors)))
	for _, tr := range tb.rows {
		cells := []string{tr.write}
		for _, a := range tb.actors {
			out := ""
			for _, ans := range g.cells[tr.write][a] {
				o := ans.outcome
				if ans.err != nil {
					o = "error"
				}
				if out != "" && out != o {
					o = "mixed"
				}
				out = o
			}
			cells = append(cells, out)
		}
		fmt.Fprintf(&b, "| %s |\n", strings.Join(cells, " | "))
	}
	return b.String()
}

// run runs every cell of tb, as actors, and each row's control: the
// dry-run writes and the certificate requests at once, then, once the hub
// decided on every request, the requests left to it, then the tunnels.
func (s *setup) run(t *testing.T, tb *table, actors []*actor) *answers {
	t.Helper()
	ctx := s.h.Ctx
	got := &answers{cells: map[string]map[string][]answer{}, controls: map[string][]answer{}}
	admin, err := newActor("hub administrator", "admin", s.h.Cluster.RESTConfig())
	kit.Must(t, "a client of the hub administrator", err)

	type pending struct {
		row, actor, what, name string
		want                   string
	}
	var (
		wg    sync.WaitGroup
		sem   = make(chan struct{}, concurrency)
		mu    sync.Mutex
		toHub []pending
	)
	goCell := func(f func()) {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			f()
		})
	}
	for _, tr := range tb.rows {
		r, _ := rowByName(tr.write)
		switch {
		case r.writes != nil:
			for _, a := range append([]*actor{admin}, actors...) {
				name := a.name
				if a == admin {
					name = ""
				}
				for _, w := range r.writes {
					goCell(func() { got.add(r.name, name, s.send(ctx, w, a)) })
				}
			}
		case r.requests != nil:
			for j, a := range actors {
				for _, req := range r.requests(s, a) {
					goCell(func() {
						ans, name := s.file(ctx, a, req)
						if name == "" {
							got.add(r.name, a.name, ans)
							return
						}
						mu.Lock()
						defer mu.Unlock()
						toHub = append(toHub, pending{row: r.name, actor: a.name, what: req.what, name: name, want: tr.cells[j]})
					})
				}
			}
		}
	}
	wg.Wait()

	// The hub decides on the requests no actor could approve itself.
	s.sentinel(t)
	for _, p := range toHub {
		goCell(func() {
			wait := time.Duration(0)
			if p.want == allow {
				wait = 30 * time.Second
			}
			state, err := s.waitApproved(ctx, p.name, wait)
			ans := answer{what: p.what, err: err, detail: "request " + p.name + " left pending by the hub"}
			switch state {
			case allow:
				ans.outcome, ans.detail = allow, "request "+p.name+" approved by the hub"
			case deny, "":
				ans.outcome = deny
			}
			got.add(p.row, p.actor, ans)
		})
	}
	wg.Wait()

	// Tunnels, one at a time: a cluster has one tunnel.
	for _, tr := range tb.rows {
		r, _ := rowByName(tr.write)
		if r.attach == "" {
			continue
		}
		for _, a := range actors {
			got.add(r.name, a.name, s.attach(ctx, a.cfg, r.attach))
		}
		cfg, err := s.h.Cluster.ConfigForUser(agentUser(r.attach), identity.AgentGroups(r.attach)...)
		kit.Must(t, "a certificate of the agent of "+r.attach, err)
		control := s.attach(ctx, cfg, r.attach)
		control.what = r.attach + "'s agent attaches its tunnel"
		got.add(r.name, "", control)
	}
	return got
}

// send sends w as a's user: allowed when one of its forms is, denied when
// every form is refused for a's rights (403, or 422 from an admission
// policy), an error otherwise.
func (s *setup) send(ctx context.Context, w write, a *actor) answer {
	var errs []error
	for _, f := range w.forms {
		err := f(ctx, s, a.c)
		if err == nil {
			return answer{what: w.what, outcome: allow}
		}
		errs = append(errs, err)
	}
	err := errors.Join(errs...)
	for _, e := range errs {
		if !refused(e) {
			return answer{what: w.what, err: err}
		}
	}
	return answer{what: w.what, outcome: deny, detail: err.Error()}
}

// refused reports whether err refuses a write for its requester's rights:
// 401, 403 (RBAC or an admission policy), or 422 (an admission policy or
// the CRD's validation).
func refused(err error) bool {
	var se setupError
	if errors.As(err, &se) {
		return false
	}
	return apierrors.IsForbidden(err) || apierrors.IsInvalid(err) || apierrors.IsUnauthorized(err)
}

// file files req as a's user and approves it if a may. It returns the
// answer, or, when neither refused nor approved, the request's name for
// the hub's decision.
func (s *setup) file(ctx context.Context, a *actor, req request) (answer, string) {
	obj := req.csr.DeepCopy()
	if err := a.c.Create(ctx, obj); err != nil {
		if refused(err) {
			return answer{what: req.what, outcome: deny, detail: err.Error()}, ""
		}
		return answer{what: req.what, err: fmt.Errorf("file the request: %w", err)}, ""
	}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur := &certificatesv1.CertificateSigningRequest{}
		if err := s.admin.Get(ctx, client.ObjectKeyFromObject(obj), cur); err != nil {
			return setupError{err}
		}
		if csr.Decided(cur) {
			return nil
		}
		return csr.ApproveRequest(ctx, a.c, cur, "AttackMatrix", "approved by its requester")
	})
	switch {
	case err == nil:
		state, err := s.approval(ctx, obj.Name)
		if state == "" {
			state = "pending"
		}
		return answer{what: req.what, outcome: state, err: err, detail: "request " + obj.Name + " approved by its requester or the hub"}, ""
	case !refused(err):
		return answer{what: req.what, err: fmt.Errorf("approve request %s: %w", obj.Name, err)}, ""
	}
	return answer{}, obj.Name
}

// attach attaches cluster's hub tunnel with cfg's credential, as an agent
// does, and closes it.
func (s *setup) attach(ctx context.Context, cfg *rest.Config, cluster string) answer {
	what := "attach the tunnel of " + cluster
	url, err := proxyagent.AttachURL(s.h.Cluster.Server(), cluster)
	if err != nil {
		return answer{what: what, err: err}
	}
	conn, err := framework.AttachTunnelAs(ctx, cfg, url)
	if err == nil {
		_ = conn.Close()
		return answer{what: what, outcome: allow}
	}
	if msg := err.Error(); strings.Contains(msg, ": 401 ") || strings.Contains(msg, ": 403 ") {
		return answer{what: what, outcome: deny, detail: msg}
	}
	return answer{what: what, err: err}
}
