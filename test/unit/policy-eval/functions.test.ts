import { describe, expect, it } from 'vitest';
import {
  CEL_FUNCTIONS,
  celCheckingEnvironment,
  checkCel,
  checkedCel,
} from '../../../src/hosted/cel.js';
import { CEL_RUNTIME, CEL_STRING_BUILTINS } from '../../../src/policy-eval/functions.js';

describe("the evaluator's CEL functions", () => {
  it('implements only functions the service declares, by their declared signatures', () => {
    expect(Object.keys(CEL_RUNTIME).filter((s) => !CEL_FUNCTIONS.includes(s))).toEqual([]);
    const known = new Set(
      celCheckingEnvironment()
        .getDefinitions()
        .functions.map((f) => f.signature),
    );
    expect(Object.keys(CEL_STRING_BUILTINS).filter((s) => !known.has(s))).toEqual([]);
  });

  it('runs the expression validation parsed and checked: one parse per text', () => {
    const text = "req.url.path.startsWith('/one-parse') && getReqHeader('x').size() == 0";
    expect(checkCel(text, 'bool')).toEqual([]);
    const first = checkedCel(text);
    expect(checkedCel(text)).toBe(first);
    expect('program' in first && first.type).toBe('bool');
    expect(checkedCel('1 +')).toMatchObject({ issue: { offset: expect.any(Number) } });
  });
});
