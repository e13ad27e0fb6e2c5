// `Transform`: computes a value from a template (a string, or an object/array of templates).
// `{"name": "ack", "kind": "Transform", "expression": {"received": true}}`
import { templateField } from './fields.ts';
import type { StepKind } from './types.ts';

export const transformStep: StepKind = {
  kind: 'Transform',
  description: '`expression`: a template (string, object or array); its value is the output',
  fields: ['expression'],
  prepare(step) {
    const expression = templateField(step, 'expression', { required: true });
    return {
      templates: { expression },
      run: async (resolved) => ({ body: resolved.expression }),
    };
  },
};
