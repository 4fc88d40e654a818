{{/* The release's resources are named <release>-toolgate, or <release> when it already says toolgate. */}}
{{- define "toolgate.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "toolgate.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/* Selector labels of one role (api, worker, migrate). */}}
{{- define "toolgate.selector" -}}
app.kubernetes.io/name: {{ .root.Chart.Name }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .role }}
{{- end -}}

{{- define "toolgate.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{/* The Secret the containers' environment comes from: yours (existingSecret) or the chart's. */}}
{{- define "toolgate.secretName" -}}
{{- .Values.existingSecret | default (include "toolgate.fullname" .) -}}
{{- end -}}

{{/* The environment of a container: the chart-wide settings, then the role's (which win). */}}
{{- define "toolgate.env" -}}
{{- $env := merge (dict) (.roleEnv | default dict) (.root.Values.env | default dict) -}}
{{- range $name, $value := $env }}
- name: {{ $name }}
  value: {{ $value | toString | quote }}
{{- end }}
{{- end -}}

{{/* The pod-level settings every role shares. */}}
{{- define "toolgate.podSpec" -}}
automountServiceAccountToken: false
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
securityContext:
  {{- toYaml .Values.podSecurityContext | nindent 2 }}
{{- with .Values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{/* The container of a serving role (api, worker): toolgate serve --role ROLE. */}}
{{- define "toolgate.serveContainer" -}}
- name: toolgate
  image: {{ include "toolgate.image" .root }}
  imagePullPolicy: {{ .root.Values.image.pullPolicy }}
  args:
    - serve
    - --role
    - {{ .role }}
    {{- if .root.Values.migrations.enabled }}
    - --no-migrate
    {{- end }}
  ports:
    - name: http
      containerPort: 8080
      protocol: TCP
  env:
    - name: LISTEN_ADDR
      value: ":8080"
    {{- include "toolgate.env" (dict "root" .root "roleEnv" .values.env) | nindent 4 }}
  envFrom:
    - secretRef:
        name: {{ include "toolgate.secretName" .root }}
  livenessProbe:
    httpGet:
      path: /healthz
      port: http
    periodSeconds: 10
    timeoutSeconds: 3
    failureThreshold: 3
  readinessProbe:
    httpGet:
      path: /readyz
      port: http
    periodSeconds: 5
    timeoutSeconds: 3
    failureThreshold: 2
  startupProbe:
    httpGet:
      path: /healthz
      port: http
    periodSeconds: 2
    failureThreshold: 60
  resources:
    {{- toYaml .values.resources | nindent 4 }}
  securityContext:
    {{- toYaml .root.Values.securityContext | nindent 4 }}
{{- end -}}
