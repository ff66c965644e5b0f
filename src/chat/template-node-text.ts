/**
 * Short source-like texts of template AST nodes (`for … in messages`, `{{ message.content | trim }}`), for error
 * messages that name the construct where a render failed.
 */

/** An AST node of @huggingface/jinja (the fields read here). */
// biome-ignore lint/suspicious/noExplicitAny: @huggingface/jinja AST nodes are untyped
type Node = { type: string } & Record<string, any>;

/** A short text naming a statement (for error messages). */
export function describeStatement(n: Node): string {
  switch (n.type) {
    case 'For':
      return `for … in ${exprText(n.iterable)}`;
    case 'If':
      return `if ${exprText(n.test)}`;
    case 'SetStatement':
    case 'Set':
      return `set ${exprText(n.assignee)}`;
    case 'Macro':
      return `macro ${exprText(n.name)}`;
    default:
      return `{{ ${exprText(n)} }}`;
  }
}

function exprText(n: Node | undefined, depth = 0): string {
  if (!n || depth > 6) return '…';
  switch (n.type) {
    case 'Identifier':
      return String(n.value);
    case 'IntegerLiteral':
    case 'FloatLiteral':
      return String(n.value);
    case 'StringLiteral':
      return JSON.stringify(n.value).slice(0, 40);
    case 'MemberExpression':
      return n.computed
        ? `${exprText(n.object, depth + 1)}[${exprText(n.property, depth + 1)}]`
        : `${exprText(n.object, depth + 1)}.${exprText(n.property, depth + 1)}`;
    case 'CallExpression':
      return `${exprText(n.callee, depth + 1)}(${(n.args as Node[]).map((a) => exprText(a, depth + 1)).join(', ')})`;
    case 'FilterExpression':
      return `${exprText(n.operand, depth + 1)} | ${exprText(n.filter, depth + 1)}`;
    case 'BinaryExpression':
      return `${exprText(n.left, depth + 1)} ${n.operator?.value ?? '?'} ${exprText(n.right, depth + 1)}`;
    case 'SelectExpression':
      return `${exprText(n.lhs, depth + 1)} if ${exprText(n.test, depth + 1)}`;
    default:
      return n.type;
  }
}
