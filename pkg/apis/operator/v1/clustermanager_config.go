package v1

// RegistrationHubConfiguration configures cluster registration on the hub.
type RegistrationHubConfiguration struct {
	// autoApproveUsers are bootstrap identities whose clusters are accepted and
	// whose CSRs are approved automatically (feature ManagedClusterAutoApproval).
	// +optional
	AutoApproveUsers []string `json:"autoApproveUsers,omitempty"`

	// featureGates turn registration features on or off.
	// +optional
	FeatureGates []FeatureGate `json:"featureGates,omitempty"`

	// registrationDrivers are the ways agents may authenticate, one per auth type.
	// +optional
	// +listType=map
	// +listMapKey=authType
	RegistrationDrivers []RegistrationDriverHub `json:"registrationDrivers,omitempty"`

	// importerConfiguration configures OCM's cluster importer. This hub has
	// none (clusters join with a Klusterlet): an importerConfiguration that
	// sets anything is not applied.
	// +optional
	ImporterConfiguration *ImporterConfiguration `json:"importerConfiguration,omitempty"`
}

// ImporterConfiguration configures the cluster importer.
type ImporterConfiguration struct {
	// renderers are the import renderers to use: render-auto, render-from-config-secret.
	// +optional
	Renderers []string `json:"renderers,omitempty"`
}

// Registration auth types.
const (
	// CSRAuthType authenticates agents with client certificates from CSRs.
	CSRAuthType = "csr"
	// AwsIrsaAuthType authenticates agents with AWS IAM roles for service accounts.
	AwsIrsaAuthType = "awsirsa"
	// GRPCAuthType authenticates agents to the hub's gRPC server.
	GRPCAuthType = "grpc"
	// TokenAuthType authenticates a cluster's agent with short-lived tokens
	// of a ServiceAccount the hub creates for the cluster once it is
	// accepted (a Klusterlet's registrationDriver only): no client
	// certificate is signed, so it works on hubs that sign none.
	TokenAuthType = "token"
)

// RegistrationDriverHub is one way agents may authenticate to the hub.
type RegistrationDriverHub struct {
	// authType is csr (the default), awsirsa or grpc.
	// +required
	// +kubebuilder:default=csr
	// +kubebuilder:validation:Enum=csr;awsirsa;grpc
	AuthType string `json:"authType,omitempty"`

	// csr configures the csr driver.
	// +optional
	CSR *CSRConfig `json:"csr,omitempty"`

	// awsirsa configures the awsirsa driver.
	// +optional
	AwsIrsa *AwsIrsaConfig `json:"awsirsa,omitempty"`

	// grpc configures the grpc driver.
	// +optional
	GRPC *GRPCRegistrationConfig `json:"grpc,omitempty"`
}

// CSRConfig configures the csr registration driver.
type CSRConfig struct {
	// autoApprovedIdentities are the bootstrap identities whose CSRs are approved automatically.
	// +optional
	AutoApprovedIdentities []string `json:"autoApprovedIdentities,omitempty"`
}

// AwsIrsaConfig configures the awsirsa registration driver.
type AwsIrsaConfig struct {
	// hubClusterArn is the ARN of the hub EKS cluster.
	// +optional
	// +kubebuilder:validation:Pattern=`^arn:aws:eks:([a-zA-Z0-9-]+):(\d{12}):cluster/([a-zA-Z0-9-]+)$`
	HubClusterArn string `json:"hubClusterArn,omitempty"`

	// autoApprovedIdentities are the ARN patterns approved automatically.
	// +optional
	AutoApprovedIdentities []string `json:"autoApprovedIdentities,omitempty"`

	// tags are added to the AWS resources the hub creates.
	// +optional
	Tags []string `json:"tags,omitempty"`
}

// GRPCRegistrationConfig configures the grpc registration driver.
type GRPCRegistrationConfig struct {
	// autoApprovedIdentities are the identities approved automatically.
	// +optional
	AutoApprovedIdentities []string `json:"autoApprovedIdentities,omitempty"`
}

// WorkDriverType is how the work controller and agents exchange ManifestWorks.
type WorkDriverType string

const (
	// WorkDriverTypeKube exchanges ManifestWorks through the hub's kube-apiserver.
	WorkDriverTypeKube WorkDriverType = "kube"
	// WorkDriverTypeMqtt exchanges them through an MQTT broker.
	WorkDriverTypeMqtt WorkDriverType = "mqtt"
	// WorkDriverTypeGrpc exchanges them through the hub's gRPC server.
	WorkDriverTypeGrpc WorkDriverType = "grpc"
)

// WorkConfiguration configures the hub's work controller.
type WorkConfiguration struct {
	// featureGates turn work features on or off, such as ManifestWorkReplicaSet.
	// +optional
	FeatureGates []FeatureGate `json:"featureGates,omitempty"`

	// workDriver is kube (the default), mqtt or grpc. Agents must use the same driver.
	// +optional
	// +kubebuilder:default=kube
	// +kubebuilder:validation:Enum=kube;mqtt;grpc
	WorkDriver WorkDriverType `json:"workDriver,omitempty"`
}

// AddOnManagerConfiguration configures the add-on manager.
type AddOnManagerConfiguration struct {
	// featureGates turn add-on manager features on or off.
	// +optional
	FeatureGates []FeatureGate `json:"featureGates,omitempty"`
}

// PlacementConfiguration configures the placement controller.
type PlacementConfiguration struct {
	// featureGates turn placement features on or off.
	// +optional
	FeatureGates []FeatureGate `json:"featureGates,omitempty"`
}

// ServerConfiguration configures the hub's server for agents.
type ServerConfiguration struct {
	// imagePullSpec is the server's image.
	// +optional
	ImagePullSpec string `json:"imagePullSpec,omitempty"`

	// featureGates turn server features on or off.
	// +optional
	FeatureGates []FeatureGate `json:"featureGates,omitempty"`

	// endpointsExposure say how the server's endpoints are exposed.
	// +optional
	EndpointsExposure []EndpointExposure `json:"endpointsExposure,omitempty"`
}

// EndpointExposure says how one endpoint of the hub's server is exposed.
type EndpointExposure struct {
	// usage is agentToHub (used by agents) or consumer (used by external consumers).
	// +optional
	Usage string `json:"usage,omitempty"`

	// protocol is grpc (the default) or https.
	// +required
	// +kubebuilder:default=grpc
	// +kubebuilder:validation:Enum=grpc;https
	Protocol string `json:"protocol"`

	// grpc configures the grpc endpoint.
	// +optional
	GRPC *Endpoint `json:"grpc,omitempty"`

	// https configures the https endpoint.
	// +optional
	HTTPS *Endpoint `json:"https,omitempty"`
}

// EndpointExposureType is how an endpoint is exposed.
type EndpointExposureType string

const (
	// EndpointTypeHostname exposes the endpoint at a fixed host name.
	EndpointTypeHostname EndpointExposureType = "hostname"
	// EndpointTypeLoadBalancer exposes the endpoint with a LoadBalancer Service.
	EndpointTypeLoadBalancer EndpointExposureType = "loadBalancer"
	// EndpointTypeRoute exposes the endpoint with an OpenShift Route.
	EndpointTypeRoute EndpointExposureType = "route"
)

// Endpoint says how an endpoint is exposed.
type Endpoint struct {
	// type is hostname (the default), loadBalancer or route.
	// +required
	// +kubebuilder:default=hostname
	// +kubebuilder:validation:Enum=hostname;loadBalancer;route
	Type EndpointExposureType `json:"type,omitempty"`

	// hostname configures type hostname.
	// +optional
	Hostname *HostnameConfig `json:"hostname,omitempty"`

	// loadBalancer configures type loadBalancer.
	// +optional
	LoadBalancer *LoadBalancerConfig `json:"loadBalancer,omitempty"`

	// route configures type route.
	// +optional
	Route *RouteConfig `json:"route,omitempty"`
}

// HostnameConfig is a fixed host name of an endpoint.
type HostnameConfig struct {
	// host is the host name.
	// +required
	Host string `json:"host"`

	// caBundle is the PEM-encoded CA bundle of the endpoint.
	// +optional
	CABundle []byte `json:"caBundle,omitempty"`
}

// LoadBalancerConfig customizes an endpoint exposed by a load balancer.
type LoadBalancerConfig struct {
	// host is the host name of the endpoint.
	// +optional
	Host string `json:"host,omitempty"`

	// caBundle is the PEM-encoded CA bundle of the endpoint.
	// +optional
	CABundle []byte `json:"caBundle,omitempty"`
}

// RouteConfig customizes an endpoint exposed by a route.
type RouteConfig struct {
	// host is the host name of the endpoint.
	// +optional
	Host string `json:"host,omitempty"`

	// caBundle is the PEM-encoded CA bundle of the endpoint.
	// +optional
	CABundle []byte `json:"caBundle,omitempty"`
}

// NetworkPolicyConfiguration configures the NetworkPolicies of the hub
// controller's Pod in the hub namespace.
type NetworkPolicyConfiguration struct {
	// monitoringNamespace is the namespace of the Prometheus scraper allowed
	// to reach the hub controller's metrics port. Unset adds no such policy:
	// no Pod reaches the metrics port.
	// +optional
	MonitoringNamespace string `json:"monitoringNamespace,omitempty"`

	// apiServerNamespace is the namespace the API server's webhook calls
	// come from, for API servers that run as Pods in it. Unset adds no such
	// restriction: the webhook port accepts every source, as it must where
	// the API server runs on the host network.
	// +optional
	APIServerNamespace string `json:"apiServerNamespace,omitempty"`
}

// DefaultClusterManagerConfiguration configures Default mode.
type DefaultClusterManagerConfiguration struct {
	// registrationWebhookConfiguration configures the registration webhook server.
	// +optional
	RegistrationWebhookConfiguration DefaultWebhookConfiguration `json:"registrationWebhookConfiguration,omitempty"`

	// workWebhookConfiguration configures the work webhook server.
	// +optional
	WorkWebhookConfiguration DefaultWebhookConfiguration `json:"workWebhookConfiguration,omitempty"`

	// addonWebhookConfiguration configures the add-on webhook server.
	// +optional
	AddonWebhookConfiguration DefaultWebhookConfiguration `json:"addonWebhookConfiguration,omitempty"`
}

// HostedClusterManagerConfiguration configures Hosted mode.
type HostedClusterManagerConfiguration struct {
	// registrationWebhookConfiguration configures the registration webhook server.
	// +optional
	RegistrationWebhookConfiguration HostedWebhookConfiguration `json:"registrationWebhookConfiguration,omitempty"`

	// workWebhookConfiguration configures the work webhook server.
	// +optional
	WorkWebhookConfiguration HostedWebhookConfiguration `json:"workWebhookConfiguration,omitempty"`
}

// DefaultWebhookConfiguration configures a webhook server in Default mode.
// kubectl-ocm validates with admission policies and runs no webhook server;
// the field is kept so that OCM manifests still apply.
type DefaultWebhookConfiguration struct {
	// bindConfiguration sets the server's ports.
	// +optional
	BindConfiguration *BindConfiguration `json:"bindConfiguration,omitempty"`
}

// HostedWebhookConfiguration configures a webhook server in Hosted mode.
type HostedWebhookConfiguration struct {
	// address is the server's IP address or host name, reachable from the hub's API server.
	// +required
	// +kubebuilder:validation:Pattern=`^(([a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9\-]*[a-zA-Z0-9])\.)*([A-Za-z0-9]|[A-Za-z0-9][A-Za-z0-9\-]*[A-Za-z0-9])$`
	Address string `json:"address"`

	// port is the server's external port; 443 by default.
	// +optional
	// +kubebuilder:default=443
	// +kubebuilder:validation:Maximum=65535
	Port int32 `json:"port,omitempty"`

	// bindConfiguration sets the server's ports.
	// +optional
	BindConfiguration *BindConfiguration `json:"bindConfiguration,omitempty"`
}

// BindConfiguration sets the ports of a server.
type BindConfiguration struct {
	// port is the serving port; 9443 by default.
	// +optional
	// +kubebuilder:default=9443
	// +kubebuilder:validation:Maximum=65535
	Port int32 `json:"port,omitempty"`

	// healthProbePort is the health probe port; 8000 by default, 0 or less disables it.
	// +optional
	// +kubebuilder:default=8000
	// +kubebuilder:validation:Maximum=65535
	HealthProbePort int32 `json:"healthProbePort"`

	// metricsPort is the metrics port; 8080 by default, 0 or less disables it.
	// +optional
	// +kubebuilder:default=8080
	// +kubebuilder:validation:Maximum=65535
	MetricsPort int32 `json:"metricsPort"`

	// hostNetwork runs the server's pods in the host network.
	// +optional
	HostNetwork bool `json:"hostNetwork,omitempty"`
}
