package v1

// ManifestConfigOption configures the manifests of a ManifestWork that match
// its resource identifier.
type ManifestConfigOption struct {
	// resourceIdentifier selects the manifest by group, resource, name and
	// namespace. Rules for a resource the ManifestWork does not create are ignored.
	// +required
	ResourceIdentifier ResourceIdentifier `json:"resourceIdentifier"`

	// feedbackRules say which status fields of the applied object to report
	// in status.resourceStatus.manifests[].statusFeedback.
	// +optional
	FeedbackRules []FeedbackRule `json:"feedbackRules,omitempty"`

	// updateStrategy says how the agent updates the object once it exists.
	// Unset means Update.
	// +optional
	UpdateStrategy *UpdateStrategy `json:"updateStrategy,omitempty"`

	// conditionRules derive conditions of the manifest, and of the whole
	// ManifestWork, from the applied object. A True Complete condition stops
	// further updates of the manifest.
	// +optional
	ConditionRules []ConditionRule `json:"conditionRules,omitempty"`

	// feedbackScrapeType is how the agent collects status feedback: Poll (the
	// default, every status sync interval) or Watch (an informer on the object).
	// +optional
	// +kubebuilder:default=Poll
	// +kubebuilder:validation:Enum=Poll;Watch
	FeedbackScrapeType FeedbackScrapeType `json:"feedbackScrapeType,omitempty"`
}

// FeedbackScrapeType is how the agent collects status feedback.
type FeedbackScrapeType string

const (
	// FeedbackPollType reads the object every status sync interval.
	FeedbackPollType FeedbackScrapeType = "Poll"
	// FeedbackWatchType watches the object and reports changes as they happen.
	FeedbackWatchType FeedbackScrapeType = "Watch"
)

// UpdateStrategyType says how the agent updates an object it applied.
type UpdateStrategyType string

const (
	// UpdateStrategyTypeUpdate updates the object to match the manifest.
	UpdateStrategyTypeUpdate UpdateStrategyType = "Update"
	// UpdateStrategyTypeCreateOnly creates the object if it is missing and
	// never updates it, leaving it to another controller on the managed cluster.
	UpdateStrategyTypeCreateOnly UpdateStrategyType = "CreateOnly"
	// UpdateStrategyTypeServerSideApply applies the manifest with server-side
	// apply, so other field managers may own other fields. A conflict makes
	// the manifest's Applied condition False.
	UpdateStrategyTypeServerSideApply UpdateStrategyType = "ServerSideApply"
	// UpdateStrategyTypeReadOnly never writes the object; the agent only checks
	// that it exists and collects its status feedback.
	UpdateStrategyTypeReadOnly UpdateStrategyType = "ReadOnly"
)

// UpdateStrategy says how the agent updates an object it applied.
type UpdateStrategy struct {
	// type is Update (the default), CreateOnly, ServerSideApply or ReadOnly.
	// +required
	// +kubebuilder:default=Update
	// +kubebuilder:validation:Enum=Update;CreateOnly;ServerSideApply;ReadOnly
	Type UpdateStrategyType `json:"type,omitempty"`

	// serverSideApply configures server-side apply when type is ServerSideApply.
	// +optional
	ServerSideApply *ServerSideApplyConfig `json:"serverSideApply,omitempty"`
}

// DefaultFieldManager is the field manager the agent applies with when
// serverSideApply.fieldManager is not set.
const DefaultFieldManager = "work-agent"

// ServerSideApplyConfig configures server-side apply of a manifest.
type ServerSideApplyConfig struct {
	// force takes ownership of conflicting fields from other field managers.
	// +optional
	Force bool `json:"force"`

	// fieldManager is the field manager the agent applies with. It must start
	// with work-agent, the default.
	// +optional
	// +kubebuilder:default=work-agent
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:Pattern=`^work-agent`
	FieldManager string `json:"fieldManager,omitempty"`

	// ignoreFields are fields of the object the agent leaves alone: it
	// applies the object with their live values, so it never takes them over
	// and never undoes changes made to them on the managed cluster.
	// +optional
	IgnoreFields []IgnoreField `json:"ignoreFields,omitempty"`
}

// IgnoreFieldsCondition says when ignored fields are left alone.
type IgnoreFieldsCondition string

const (
	// IgnoreFieldsConditionOnSpokePresent ignores the fields once the object
	// exists on the managed cluster: changes to them in the manifest are not applied.
	IgnoreFieldsConditionOnSpokePresent IgnoreFieldsCondition = "OnSpokePresent"
	// IgnoreFieldsConditionOnSpokeChange ignores changes made to the fields on
	// the managed cluster, while changes in the manifest are still applied.
	IgnoreFieldsConditionOnSpokeChange IgnoreFieldsCondition = "OnSpokeChange"
)

// IgnoreField lists fields of an object the agent leaves alone under a condition.
type IgnoreField struct {
	// condition is when the fields are ignored: OnSpokePresent (the default)
	// or OnSpokeChange.
	// +optional
	// +kubebuilder:default=OnSpokePresent
	// +kubebuilder:validation:Enum=OnSpokePresent;OnSpokeChange
	Condition IgnoreFieldsCondition `json:"condition,omitempty"`

	// jsonPaths are JSONPath expressions of the fields, such as .spec.replicas.
	// +optional
	JSONPaths []string `json:"jsonPaths,omitempty"`

	// jsonPointers are RFC 6901 JSON pointers of the fields, such as /spec/replicas.
	// +optional
	JSONPointers []string `json:"jsonPointers,omitempty"`

	// jqPathExpressions are jq path expressions of the fields. The agent does
	// not evaluate jq: a manifest that sets them fails with reason
	// AppliedManifestSSAIgnoreFieldError.
	// +optional
	JQPathExpressions []string `json:"jqPathExpressions,omitempty"`
}

// FeedBackType is how a feedback rule selects status fields.
type FeedBackType string

const (
	// WellKnownStatusType reports a fixed set of status fields of well-known
	// kinds (Deployment, DaemonSet, Job, Pod).
	WellKnownStatusType FeedBackType = "WellKnownStatus"
	// JSONPathsType reports the fields selected by jsonPaths.
	JSONPathsType FeedBackType = "JSONPaths"
)

// FeedbackRule selects status fields of an applied object to report.
//
// +kubebuilder:validation:XValidation:rule="self.type != 'JSONPaths' || (has(self.jsonPaths) && size(self.jsonPaths) > 0)",message="jsonPaths is required when type is JSONPaths",fieldPath=`.jsonPaths`
type FeedbackRule struct {
	// type is WellKnownStatus (the agent's built-in fields for common kinds) or
	// JSONPaths (the fields listed in jsonPaths).
	// +required
	// +kubebuilder:validation:Enum=WellKnownStatus;JSONPaths
	Type FeedBackType `json:"type"`

	// jsonPaths are the fields to report when type is JSONPaths.
	// +optional
	JsonPaths []JsonPath `json:"jsonPaths,omitempty"`
}

// JsonPath names one field to report as status feedback.
type JsonPath struct {
	// name is the name the value is reported under.
	// +required
	Name string `json:"name"`

	// version is the API version to read the object at; empty means the
	// preferred version.
	// +optional
	Version string `json:"version,omitempty"`

	// path is a Kubernetes JSONPath on the whole object, such as
	// .status.readyReplicas. It must select a single integer, string or
	// boolean; a missing field reports nothing.
	// +required
	Path string `json:"path"`
}

// ConditionRuleType is how a condition rule computes its condition.
type ConditionRuleType string

const (
	// CelConditionExpressionsType computes the condition from celExpressions.
	CelConditionExpressionsType ConditionRuleType = "CEL"
	// WellKnownConditionsType computes the Complete condition of Jobs and Pods
	// with built-in rules.
	WellKnownConditionsType ConditionRuleType = "WellKnownConditions"
)

// ConditionRule sets a condition of a manifest from its applied object.
//
// +kubebuilder:validation:XValidation:rule=`self.type != 'CEL' || (has(self.condition) && self.condition != "")`,message="condition is required when type is CEL",fieldPath=`.condition`
type ConditionRule struct {
	// condition is the type of the condition set, for example Complete. It is
	// required for CEL rules; WellKnownConditions rules set Complete.
	// +optional
	// +kubebuilder:validation:MaxLength=316
	Condition string `json:"condition"`

	// type is CEL or WellKnownConditions.
	// +required
	// +kubebuilder:validation:Enum=CEL;WellKnownConditions
	Type ConditionRuleType `json:"type"`

	// celExpressions are CEL expressions over the applied object (the variable
	// object); the condition is True when all of them evaluate to true.
	// +optional
	CelExpressions []string `json:"celExpressions,omitempty"`

	// message is the condition's message.
	// +optional
	Message string `json:"message,omitempty"`

	// messageExpression is a CEL expression producing the condition's message,
	// with the variables object and result (the rule's boolean outcome). A
	// non-empty result overrides message.
	// +optional
	MessageExpression string `json:"messageExpression,omitempty"`
}
