/**
 * How filters treat inputs that are not what they expect, as llama.cpp's Jinja engine (common/jinja) does and
 * @huggingface/jinja does not: undefined and None inputs give an empty value instead of an error, and string filters
 * stringify other values first. Data only; `jinja-interpreter.ts` applies it.
 */

/** What a filter returns for an undefined input, as llama.cpp's Jinja engine (an empty value of this kind). */
export const UNDEFINED_FILTERS: Record<string, 'array' | 'string' | 'int' | 'undefined'> = {
  capitalize: 'string',
  first: 'undefined',
  items: 'array',
  join: 'string',
  last: 'undefined',
  length: 'int',
  list: 'array',
  lower: 'string',
  map: 'array',
  max: 'undefined',
  min: 'undefined',
  reject: 'array',
  rejectattr: 'array',
  replace: 'string',
  reverse: 'array',
  safe: 'string',
  select: 'array',
  selectattr: 'array',
  sort: 'array',
  string: 'string',
  strip: 'string',
  sum: 'int',
  title: 'string',
  truncate: 'string',
  unique: 'array',
  upper: 'string',
  wordcount: 'int',
  count: 'int',
  trim: 'string',
};
/** Filters whose non-string input llama.cpp turns into its string form first. */
export const COERCED_TO_STRING = new Set([
  'capitalize',
  'lower',
  'replace',
  'strip',
  'trim',
  'title',
  'upper',
  'wordcount',
]);
/** What a filter returns for None: an empty list, or the string 'None'. */
export const NONE_FILTERS: Record<string, 'array' | 'None'> = {
  items: 'array',
  map: 'array',
  reject: 'array',
  rejectattr: 'array',
  select: 'array',
  selectattr: 'array',
  unique: 'array',
  string: 'None',
  safe: 'None',
};
