// Events written through core/v1 as the API server admits them (pkg/apis/core/validation/events.go
// ValidateEventCreate and ValidateEventUpdate, which for a v1 request stop after
// legacyValidateEvent): an Event without an eventTime (client-go's tools/record) must sit in its
// object's namespace (or in "" or "default" for a cluster-scoped object); one with an eventTime
// (events.k8s.io's kind) needs reportingComponent, reportingInstance, action and reason, within
// their limits, and a message of at most 1024 characters.
import { type Json, type JsonObject, isObject, text } from './patch.ts';
import { invalid, type StatusCause } from './status.ts';
import { metadataOf } from './store.ts';

/** pkg/apis/core/validation/events.go */
const REPORTING_INSTANCE_LIMIT = 128;
const ACTION_LIMIT = 128;
const REASON_LIMIT = 128;
const NOTE_LIMIT = 1024;

/** field.Invalid's message: the value %q, then the detail. */
const invalidValue = (field: string, value: string, detail: string): StatusCause => ({
  reason: 'FieldValueInvalid',
  message: `Invalid value: ${JSON.stringify(value)}: ${detail}`,
  field,
});
const required = (field: string): StatusCause => ({ reason: 'FieldValueRequired', message: 'Required value', field });

/** Go's len(): bytes of the UTF-8 string. */
const size = (value: string): number => Buffer.byteLength(value);

const NAME_PART = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const NAME_PART_FORMAT =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";

/** apimachinery IsQualifiedName's messages on the name part (an optional DNS-subdomain prefix and '/' is not checked here). */
function qualifiedNameErrors(value: string, field: string): StatusCause[] {
  const name = value.split('/').at(-1)!;
  const messages = [
    ...(name === '' ? ['name part must be non-empty'] : name.length > 63 ? ['name part must be no more than 63 characters'] : []),
    ...(NAME_PART.test(name) ? [] : [`name part ${NAME_PART_FORMAT}`]),
  ];
  return messages.map((message) => invalidValue(field, value, message));
}

function causesOf(event: JsonObject): StatusCause[] {
  const namespace = text(metadataOf(event).namespace);
  const involved: Json | undefined = event.involvedObject;
  const involvedNamespace = isObject(involved) ? text(involved.namespace) : '';
  const causes: StatusCause[] = [];
  const mismatch = () => causes.push(invalidValue('involvedObject.namespace', involvedNamespace, 'does not match event.namespace'));
  if (text(event.eventTime) === '') {
    if (involvedNamespace === '' ? namespace !== '' && namespace !== 'default' : namespace !== involvedNamespace) mismatch();
    return causes;
  }
  if (involvedNamespace === '' && namespace !== 'default' && namespace !== 'kube-system') mismatch();
  const controller = text(event.reportingComponent);
  if (controller === '') causes.push(required('reportingComponent'));
  causes.push(...qualifiedNameErrors(controller, 'reportingComponent'));
  const instance = text(event.reportingInstance);
  if (instance === '') causes.push(required('reportingInstance'));
  if (size(instance) > REPORTING_INSTANCE_LIMIT) causes.push(invalidValue('reportingInstance', '', `can have at most ${REPORTING_INSTANCE_LIMIT} characters`));
  const action = text(event.action);
  if (action === '') causes.push(required('action'));
  if (size(action) > ACTION_LIMIT) causes.push(invalidValue('action', '', `can have at most ${ACTION_LIMIT} characters`));
  const reason = text(event.reason);
  if (reason === '') causes.push(required('reason'));
  if (size(reason) > REASON_LIMIT) causes.push(invalidValue('reason', '', `can have at most ${REASON_LIMIT} characters`));
  if (size(text(event.message)) > NOTE_LIMIT) causes.push(invalidValue('message', '', `can have at most ${NOTE_LIMIT} characters`));
  return causes;
}

/** Throws the 422 Invalid the API server answers for an Event it refuses; returns it otherwise. */
export function admitEvent(event: JsonObject): JsonObject {
  const causes = causesOf(event);
  if (causes.length > 0) throw invalid('Event', '', text(metadataOf(event).name), causes);
  return event;
}
