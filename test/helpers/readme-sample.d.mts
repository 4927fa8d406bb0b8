export declare const SAMPLE: {
  readonly begin: string;
  readonly end: string;
  readonly root: string;
  readonly desired: string;
  readonly args: (repo: string) => string[];
};
export declare function sampleBlock(stdout: string, repo: string): string;
