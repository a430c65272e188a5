import { describe, expect, it } from 'vitest';
import { columnsOf, outputFormatFor, renderCsv, renderJson, renderTable } from './results.js';

const tty = { isTTY: true, write: () => true } as unknown as Parameters<typeof outputFormatFor>[1];
const pipe = { isTTY: false, write: () => true } as unknown as Parameters<typeof outputFormatFor>[1];

describe('collect() output formats', () => {
  it('defaults to a table on a terminal and jsonl when piped; refuses other names', () => {
    expect(outputFormatFor(undefined, tty)).toBe('table');
    expect(outputFormatFor(undefined, pipe)).toBe('jsonl');
    expect(outputFormatFor('csv', tty)).toBe('csv');
    expect(outputFormatFor('json', pipe)).toBe('json');
    expect(() => outputFormatFor('xml', tty)).toThrow('--output-format xml: expected one of table, csv, jsonl, json');
  });

  it('columns: object fields in first-seen order, f0.. for tuples, value otherwise', () => {
    expect(columnsOf([{ a: 1 }, { b: 2, a: 3 }]).names).toEqual(['a', 'b']);
    expect(columnsOf([{ a: 1 }, { b: 2 }]).cells({ b: 2 })).toEqual([null, 2]);
    expect(
      columnsOf([
        ['x', 1],
        ['y', 2, true],
      ]).names,
    ).toEqual(['f0', 'f1', 'f2']);
    expect(columnsOf(['a', 1]).names).toEqual(['value']);
    expect(columnsOf([]).names).toEqual(['value']);
  });

  it('table: boxed, numbers right-aligned, NULL for null, a row count', () => {
    expect(
      renderTable([
        { word: 'über', n: 3, note: null },
        { word: 'a', n: 12, note: 'x,y' },
      ]),
    ).toEqual([
      '+------+----+------+',
      '| word | n  | note |',
      '+------+----+------+',
      '| über |  3 | NULL |',
      '| a    | 12 | x,y  |',
      '+------+----+------+',
      '2 rows',
    ]);
    expect(renderTable([])).toEqual(['+-------+', '| value |', '+-------+', '+-------+', '0 rows']);
  });

  it('csv: a header, RFC 4180 quoting, null empty, nested values as JSON', () => {
    expect(
      renderCsv([
        { k: 'a,b', v: null, o: { x: 1 } },
        { k: 'say "hi"', v: 2, o: [1] },
      ]),
    ).toEqual(['k,v,o', '"a,b",,"{""x"":1}"', '"say ""hi""",2,[1]']);
  });

  it('json: one array of the rows as the sink wrote them, [] for none', () => {
    const lines = ['{"k":"a","v":null}', '[1,"x"]', '3'];
    expect(JSON.parse(renderJson(lines).join('\n'))).toEqual([{ k: 'a', v: null }, [1, 'x'], 3]);
    expect(renderJson(lines)).toEqual(['[', '{"k":"a","v":null},', '[1,"x"],', '3', ']']);
    expect(JSON.parse(renderJson([]).join('\n'))).toEqual([]);
  });
});
