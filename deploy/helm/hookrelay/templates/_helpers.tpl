{{/* The chart's name. */}}
{{- define "hookrelay.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The release's full name: the prefix of every object's name. */}}
{{- define "hookrelay.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else if contains (include "hookrelay.name" .) .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name (include "hookrelay.name" .) | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}

{{/* The labels of every object. */}}
{{- define "hookrelay.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/name: {{ include "hookrelay.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/* The selector labels of one component: (dict "ctx" $ "component" "api"). */}}
{{- define "hookrelay.selectorLabels" -}}
app.kubernetes.io/name: {{ include "hookrelay.name" .ctx }}
app.kubernetes.io/instance: {{ .ctx.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{/* The service account the api and worker pods run as. */}}
{{- define "hookrelay.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "hookrelay.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* The Secret holding DATABASE_URL and the keys. */}}
{{- define "hookrelay.secretName" -}}
{{- default (include "hookrelay.fullname" .) .Values.secrets.existingSecret }}
{{- end }}

{{/* Where the Temporal TLS files are mounted. */}}
{{- define "hookrelay.tlsDir" -}}/etc/hookrelay/temporal-tls{{- end }}

{{/*
The non-secret settings, as a YAML map of variable to value: the ConfigMap's
data and the setup Job's environment.
*/}}
{{- define "hookrelay.config" -}}
{{- $t := .Values.temporal -}}
TEMPORAL_ADDRESS: {{ required "temporal.address is required" $t.address | quote }}
TEMPORAL_NAMESPACE: {{ required "temporal.namespace is required" $t.namespace | quote }}
{{- if $t.tls.enabled }}
TEMPORAL_TLS: "true"
{{- end }}
{{- with $t.tls.serverName }}
TEMPORAL_TLS_SERVER_NAME: {{ . | quote }}
{{- end }}
{{- if $t.tls.secretName }}
{{- if ne (empty $t.tls.certKey) (empty $t.tls.keyKey) }}
{{- fail "temporal.tls.certKey and temporal.tls.keyKey go together" }}
{{- end }}
{{- with $t.tls.caKey }}
TEMPORAL_TLS_CA: {{ printf "%s/%s" (include "hookrelay.tlsDir" $) . | quote }}
{{- end }}
{{- with $t.tls.certKey }}
TEMPORAL_TLS_CERT: {{ printf "%s/%s" (include "hookrelay.tlsDir" $) . | quote }}
{{- end }}
{{- with $t.tls.keyKey }}
TEMPORAL_TLS_KEY: {{ printf "%s/%s" (include "hookrelay.tlsDir" $) . | quote }}
{{- end }}
{{- end }}
{{- if not .Values.config.HOOKRELAY_PUBLIC_URL }}
HOOKRELAY_PUBLIC_URL: {{ printf "http://%s-api.%s.svc:%v" (include "hookrelay.fullname" .) .Release.Namespace .Values.api.service.port | quote }}
{{- end }}
{{- range $name, $value := .Values.config }}
{{- if ne (toString $value) "" }}
{{ $name }}: {{ toString $value | quote }}
{{- end }}
{{- end }}
{{- end }}

{{/*
The secret variables a component reads, as env entries:
(dict "ctx" $ "secret" NAME "admin" BOOL). DATABASE_URL is required; the
others are optional keys.
*/}}
{{- define "hookrelay.secretEnv" -}}
- name: DATABASE_URL
  valueFrom:
    secretKeyRef: {name: {{ .secret }}, key: DATABASE_URL}
- name: TEMPORAL_API_KEY
  valueFrom:
    secretKeyRef: {name: {{ .secret }}, key: TEMPORAL_API_KEY, optional: true}
{{- if .admin }}
- name: HOOKRELAY_ADMIN_KEY
  valueFrom:
    secretKeyRef: {name: {{ .secret }}, key: HOOKRELAY_ADMIN_KEY}
- name: HOOKRELAY_METRICS_TOKEN
  valueFrom:
    secretKeyRef: {name: {{ .secret }}, key: HOOKRELAY_METRICS_TOKEN, optional: true}
{{- end }}
{{- end }}

{{/* The connection secrets every component reads: the Secret's and the setup Secret's data. */}}
{{- define "hookrelay.connectionSecretData" -}}
DATABASE_URL: {{ .Values.postgresql.url | b64enc | quote }}
{{- with .Values.temporal.apiKey }}
TEMPORAL_API_KEY: {{ . | b64enc | quote }}
{{- end }}
{{- end }}

{{/* The image of every container. */}}
{{- define "hookrelay.image" -}}
{{ printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) | quote }}
{{- end }}

{{/*
The pod spec lines every component shares: account, security, pull secrets,
the Temporal TLS volume, the scheduling fields of the component's values.
(dict "ctx" $ "account" NAME "pod" .Values.COMPONENT)
*/}}
{{- define "hookrelay.podCommon" -}}
{{- $v := .ctx.Values -}}
serviceAccountName: {{ .account }}
automountServiceAccountToken: false
enableServiceLinks: false
securityContext:
  {{- toYaml $v.podSecurityContext | nindent 2 }}
{{- with $v.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- if $v.temporal.tls.secretName }}
volumes:
  - name: temporal-tls
    secret:
      secretName: {{ $v.temporal.tls.secretName }}
      defaultMode: 0440
{{- end }}
{{- range $field := list "nodeSelector" "tolerations" "affinity" "topologySpreadConstraints" }}
{{- with get $.pod $field }}
{{ $field }}:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}
{{- end }}

{{/* The container lines every component shares: image, security, the TLS mount. */}}
{{- define "hookrelay.containerCommon" -}}
image: {{ include "hookrelay.image" . }}
imagePullPolicy: {{ .Values.image.pullPolicy }}
securityContext:
  {{- toYaml .Values.securityContext | nindent 2 }}
{{- if .Values.temporal.tls.secretName }}
volumeMounts:
  - name: temporal-tls
    mountPath: {{ include "hookrelay.tlsDir" . }}
    readOnly: true
{{- end }}
{{- end }}

{{/* A digest of the secrets given in values: a change rolls the pods. */}}
{{- define "hookrelay.secretChecksum" -}}
{{- list .Values.postgresql.url .Values.temporal.apiKey .Values.secrets.adminKey .Values.secrets.metricsToken | toJson | sha256sum }}
{{- end }}
