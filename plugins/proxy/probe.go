package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/featuregate"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/hubtunnel"
)

// probeTimeout bounds the check that the cluster answers through the hub.
const probeTimeout = 10 * time.Second

// hubTunnelFeature is the Klusterlet feature gate that runs the agent's end
// of the tunnel.
const hubTunnelFeature = featuregate.HubTunnel

// probe asks the cluster for its version through cfg and returns the line
// that says whether it answers, or a warning that says why not.
func (o *KubeconfigOptions) probe(ctx context.Context, cfg *clientcmdapi.Config) string {
	v, err := serverVersion(ctx, cfg)
	if err == nil {
		return fmt.Sprintf("%s answers through the hub (Kubernetes %s)", o.Cluster, v.GitVersion)
	}
	why := fmt.Sprintf("Warning: %s does not answer through the hub", o.Cluster)
	msg := err.Error()
	switch {
	case apierrors.IsForbidden(err) && strings.Contains(msg, hubtunnel.Resource+"/"+hubtunnel.ProxySubresource):
		user := o.hubUser(ctx)
		who := "you"
		if user != "" {
			who = fmt.Sprintf("you (User %q)", user)
		}
		return fmt.Sprintf("%s: %s may not use managedclusters/proxy of %s on the hub. A hub admin grants it with:\n%s\nThe hub said: %s",
			why, who, o.Cluster, GrantScript(o.Cluster, user), msg)
	case apierrors.IsServiceUnavailable(err) && strings.Contains(msg, "has no tunnel to the hub"):
		return fmt.Sprintf("%s: its agent has no tunnel attached to the hub. The agent is not running or cannot reach the hub, or the Klusterlet of %s turns the %s feature gate off (spec.registrationConfiguration.featureGates); check the agent with `kubectl ocm get klusterlet --context <%s's context>`.\nThe hub said: %s",
			why, o.Cluster, hubTunnelFeature, o.Cluster, msg)
	case apierrors.IsServiceUnavailable(err):
		return fmt.Sprintf("%s: the hub's API %s is not available; is the hub controller running? See `kubectl ocm hub status` and `kubectl get apiservice %s`.\nThe hub said: %s",
			why, hubtunnel.GroupVersion, hubtunnel.APIServiceName, msg)
	case apierrors.IsNotFound(err):
		return fmt.Sprintf("%s: the hub does not serve %s; upgrade the hub to a kubectl-ocm with the hub tunnel (`kubectl ocm upgrade hub`).\nThe hub said: %s",
			why, hubtunnel.GroupVersion, msg)
	case apierrors.IsUnauthorized(err):
		return fmt.Sprintf("%s: the hub does not accept your credential: %s", why, msg)
	}
	return fmt.Sprintf("%s: %s", why, msg)
}

// serverVersion asks for /version through cfg, within probeTimeout.
func serverVersion(ctx context.Context, cfg *clientcmdapi.Config) (*version.Info, error) {
	restCfg, err := clientcmd.NewDefaultClientConfig(*cfg, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, err
	}
	restCfg.Timeout = probeTimeout
	cs, err := kubernetes.NewForConfig(restCfg)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	// Result.Error, unlike Raw, turns the Status of a failure into the error.
	result := cs.CoreV1().RESTClient().Get().AbsPath("/version").Do(ctx)
	if err := result.Error(); err != nil {
		return nil, err
	}
	body, err := result.Raw()
	if err != nil {
		return nil, err
	}
	v := &version.Info{}
	if err := json.Unmarshal(body, v); err != nil {
		return nil, fmt.Errorf("decode the version the cluster sent: %w", err)
	}
	return v, nil
}

// hubUser returns the name the hub knows the user of the kubectl flags by,
// "" when the hub does not say.
func (o *KubeconfigOptions) hubUser(ctx context.Context) string {
	cfg, err := o.flags.ToRESTConfig()
	if err != nil {
		return ""
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return ""
	}
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	review, err := cs.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return ""
	}
	return review.Status.UserInfo.Username
}
