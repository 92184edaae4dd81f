// cdk-nag acknowledgements. cdk-nag v3 reads CDK's own Validations acknowledgements, so the
// construct needs no cdk-nag import. A wildcard finding is named after the resource as cdk-nag
// prints it (intrinsics flattened to <Ref> and <Res.Attr>), computed here from the same token.
import { Stack, Validations } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';

type Cfn = string | number | boolean | null | Cfn[] | { [key: string]: Cfn };

/** The flattening cdk-nag applies to a policy resource before it names an IAM5 finding. */
export function flattenCfn(node: Cfn): string {
  if (typeof node === 'string') return node.replace(/\$\{/g, '<').replace(/\}/g, '>');
  if (node !== null && typeof node === 'object' && !Array.isArray(node)) {
    const join = node['Fn::Join'];
    if (Array.isArray(join)) {
      const [delimiter, items] = join;
      return Array.isArray(items) ? items.map(flattenCfn).join(typeof delimiter === 'string' ? delimiter : '') : '';
    }
    const sub = node['Fn::Sub'];
    if (sub !== undefined) return flattenCfn(sub);
    const getAtt = node['Fn::GetAtt'];
    if (Array.isArray(getAtt)) return `<${getAtt.map(flattenCfn).join('.')}>`;
    const ref = node.Ref;
    if (ref !== undefined) return `<${flattenCfn(ref)}>`;
  }
  return JSON.stringify(node);
}

/** Acknowledges the IAM5 finding for one wildcard resource of a policy under `scope`. */
export function acknowledgeWildcardResource(scope: IConstruct, resource: string, reason: string): void {
  const flat = flattenCfn(Stack.of(scope).resolve(resource) as Cfn);
  Validations.of(scope).acknowledge({ id: `AwsSolutions-IAM5[Resource::${flat}]`, reason });
}

export function acknowledge(scope: IConstruct, id: string, reason: string): void {
  Validations.of(scope).acknowledge({ id, reason });
}
