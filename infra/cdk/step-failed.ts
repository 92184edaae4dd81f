// The pipeline functions' on-failure destination: Lambda invokes the step-failed function with the
// record of an event that failed every try, and the incident is resumed or blocked STEP_FAILED, as
// the local runtime does. Bound here rather than by CDK's LambdaDestination, whose grant covers
// every version of the target too (`arn:*`): Lambda invokes the unqualified function.
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { DestinationConfig, IDestination, IFunction } from 'aws-cdk-lib/aws-lambda';
import type { Construct } from 'constructs';

export class StepFailedDestination implements IDestination {
  readonly target: IFunction;

  constructor(target: IFunction) {
    this.target = target;
  }

  bind(_scope: Construct, fn: IFunction): DestinationConfig {
    fn.addToRolePolicy(new PolicyStatement({ actions: ['lambda:InvokeFunction'], resources: [this.target.functionArn] }));
    return { destination: this.target.functionArn };
  }
}
