// Every variable the stack gives a pipeline function, with plausible values: what a cold start reads.
export const fullEnv = {
  TABLE_NAME: 'remediation',
  BUS_NAME: 'remediation',
  BUS_ARN: 'arn:aws:events:eu-west-1:123456789012:event-bus/remediation',
  SCHEDULE_GROUP: 'etcd-remediator',
  SCHEDULER_ROLE_ARN: 'arn:aws:iam::123456789012:role/scheduler',
  SCHEDULER_DLQ_ARN: 'arn:aws:sqs:eu-west-1:123456789012:scheduler-dlq',
  SHORT_WAIT_QUEUE_URL: 'https://sqs.eu-west-1.amazonaws.com/123456789012/short-waits',
  AWS_REGION: 'eu-west-1',
};
