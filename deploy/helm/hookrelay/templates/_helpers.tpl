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

{{/* The Secret holding the encryption key ring. */}}
{{- define "hookrelay.encryptionSecretName" -}}
{{- default (printf "%s-encryption" (include "hookrelay.fullname" .)) .Values.encryption.existingSecret }}
{{- end }}

{{/* Where the encryption key ring is mounted. */}}
{{- define "hookrelay.encryptionDir" -}}/etc/hookrelay/encryption{{- end }}

{{/* The env entry naming the mounted key ring's file. */}}
{{- define "hookrelay.encryptionEnv" -}}
- {name: HOOKRELAY_ENCRYPTION_KEYS_FILE, value: {{ printf "%s/%s" (include "hookrelay.encryptionDir" .) .Values.encryption.key | quote }}}
{{- end }}

{{/* Where the Temporal TLS files are mounted. */}}
{{- define "hookrelay.tlsDir" -}}/etc/hookrelay/temporal-tls{{- end }}

{{/* Where the API's own certificate is mounted. */}}
{{- define "hookrelay.apiTLSDir" -}}/etc/hookrelay/api-tls{{- end }}

{{/* The API's scheme: https when it serves its own certificate. */}}
{{- define "hookrelay.apiScheme" -}}
{{- ternary "https" "http" (not (empty .Values.api.tls.secretName)) }}
{{- end }}

{{/*
The Secrets a component mounts, as a YAML list of name, secret and path:
the encryption key ring (keys: the API and the workers), the Temporal TLS
files, and for the API its own certificate.
(dict "ctx" $ "api" BOOL "keys" BOOL)
*/}}
{{- define "hookrelay.mounts" -}}
{{- if .keys }}
- {name: encryption-keys, secret: {{ include "hookrelay.encryptionSecretName" .ctx }}, path: {{ include "hookrelay.encryptionDir" $ }}}
{{- end }}
{{- with .ctx.Values.temporal.tls.secretName }}
- {name: temporal-tls, secret: {{ . }}, path: {{ include "hookrelay.tlsDir" $ }}}
{{- end }}
{{- if .api }}
{{- with .ctx.Values.api.tls.secretName }}
- {name: api-tls, secret: {{ . }}, path: {{ include "hookrelay.apiTLSDir" $ }}}
{{- end }}
{{- end }}
{{- end }}

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
HOOKRELAY_PUBLIC_URL: {{ printf "%s://%s-api.%s.svc:%v" (include "hookrelay.apiScheme" .) (include "hookrelay.fullname" .) .Release.Namespace .Values.api.service.port | quote }}
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
- name: AZURE_STORAGE_CONNECTION_STRING
  valueFrom:
    secretKeyRef: {name: {{ .secret }}, key: AZURE_STORAGE_CONNECTION_STRING, optional: true}
- name: HOOKRELAY_AZURE_STORAGE_CONNECTION_STRINGS
  valueFrom:
    secretKeyRef: {name: {{ .secret }}, key: HOOKRELAY_AZURE_STORAGE_CONNECTION_STRINGS, optional: true}
{{- if .admin }}
- name: HOOKRELAY_ADMIN_KEY
  valueFrom:
    secretKeyRef: {name: {{ .secret }}, key: HOOKRELAY_ADMIN_KEY}
- name: HOOKRELAY_METRICS_TOKEN
  valueFrom:
    secretKeyRef: {name: {{ .secret }}, key: HOOKRELAY_METRICS_TOKEN, optional: true}
- name: HOOKRELAY_EVENTGRID_SAS_SECRET
  valueFrom:
    secretKeyRef: {name: {{ .secret }}, key: HOOKRELAY_EVENTGRID_SAS_SECRET, optional: true}
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
the mounted Secrets, the scheduling fields of the component's values.
(dict "ctx" $ "account" NAME "pod" .Values.COMPONENT "api" BOOL)
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
{{- with include "hookrelay.mounts" . | fromYamlArray }}
volumes:
  {{- range . }}
  - name: {{ .name }}
    secret: {secretName: {{ .secret }}, defaultMode: 0440}
  {{- end }}
{{- end }}
{{- range $field := list "nodeSelector" "tolerations" "affinity" "topologySpreadConstraints" }}
{{- with get $.pod $field }}
{{ $field }}:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}
{{- end }}

{{/*
The container lines every component shares: image, security, the mounts.
(dict "ctx" $ "api" BOOL)
*/}}
{{- define "hookrelay.containerCommon" -}}
{{- $v := .ctx.Values -}}
image: {{ include "hookrelay.image" .ctx }}
imagePullPolicy: {{ $v.image.pullPolicy }}
securityContext:
  {{- toYaml $v.securityContext | nindent 2 }}
{{- with include "hookrelay.mounts" . | fromYamlArray }}
volumeMounts:
  {{- range . }}
  - {name: {{ .name }}, mountPath: {{ .path }}, readOnly: true}
  {{- end }}
{{- end }}
{{- end }}


{{/* A digest of the secrets given in values: a change rolls the pods. */}}
{{- define "hookrelay.secretChecksum" -}}
{{- $s := .Values.secrets }}
{{- list .Values.postgresql.url .Values.temporal.apiKey $s.adminKey $s.metricsToken $s.eventGridSASSecret $s.azureStorageConnectionString $s.azureStorageConnectionStrings | toJson | sha256sum }}
{{- end }}
