// The desired state's JSON Schema apart from the resources: the document's
// own keys and the definitions every resource's branch may use. The
// resources' branches are their providers' (Provider.schema);
// src/resources/schema.ts puts the two together.
import { CHECK_NAME_PATTERN } from './findings.js';

export const DESIRED_STATE_SCHEMA_BASE = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  $id: 'https://k8s-host-reconcile.invalid/schema/desired-state.schema.json',
  title: 'k8s-host-reconcile desired state',
  description: 'What a host must look like before kubespray runs. See README.md, section desired-state.yaml.',
  type: 'object',
  additionalProperties: false,
  required: ['reports_dir', 'resources'],
  properties: {
    reports_dir: {
      description:
        'Directory on the target for before.json, ports.json, facts.json, who-fixes.json and the run journal. Not /, /etc, /proc, /sys, /dev, /boot or /usr, nor under /proc, /sys or /dev.',
      type: 'string',
      pattern: '^(?!/*$|/+(etc|proc|sys|dev|boot|usr)/*$|/+(proc|sys|dev)/)/(?!(.*/)?\\.\\.(/|$))[^\\u0000-\\u001f\\u007f]*$',
      'x-message': "must be an absolute path without '..', and not a system directory",
    },
    reports_mode: {
      description:
        "Mode of the documents the tool writes in reports_dir (before.json, ports.json, facts.json, who-fixes.json, first-boot.json); a directory the tool makes there gets the same bits plus search (0600: 0700, 0640: 0750, 0644: 0755). A run's own directory (journal, backups, plan.json, result.json) is always 0700 with 0600 files.",
      enum: ['0600', '0640', '0644'],
      default: '0600',
    },
    kubespray: {
      description: 'The kubespray checkout and inventory the facts and the audit are judged against.',
      type: 'object',
      additionalProperties: false,
      required: ['dir', 'inventory', 'node'],
      properties: {
        dir: {
          $ref: '#/definitions/absPath',
        },
        inventory: {
          description: 'The Ansible inventory kubespray runs with, INI or YAML (hosts.yaml); group_vars/ and host_vars/ next to it are read too.',
          $ref: '#/definitions/absPath',
        },
        node: {
          type: 'string',
          minLength: 1,
          pattern: '^[^\\s\\u0000-\\u001f\\u007f]+$',
        },
      },
    },
    facts: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        source: {
          description: "native: computed with ansible's algorithms, no Python needed. ansible: run `ansible -m setup`.",
          enum: ['native', 'ansible'],
          default: 'native',
        },
      },
    },
    first_boot: {
      description:
        "Image mode (--root) only: what the image's first boot does with the work only a running system can do (port holders, candidates, runtime steps). apply: a one-shot unit runs reconcile --apply live once at first boot, then disables itself. verify: it runs --plan and fails when anything is pending. off: nothing is installed; a candidate service stays an operator line. Ignored on a live host.",
      enum: ['apply', 'verify', 'off'],
      default: 'apply',
    },
    accept: {
      description:
        'Findings accepted by their check name (the name in brackets in the plan: NumCPU, FileExisting-iptables, FormerNode), compared case-insensitively, as --accept NAME does: each stays in every output, marked accepted, and no longer makes the plan exit 2; kubespray is not told (its kubeadm_ignore_preflight_errors is). "all" is not taken: name each check. See docs/acceptance.md.',
      type: 'array',
      items: {
        type: 'string',
        // checkNameProblem's grammar, and not "all" in any case.
        pattern: `^(?![Aa][Ll][Ll]$)${CHECK_NAME_PATTERN.slice(1)}`,
        'x-message': "must be a check name: a letter, then letters, digits, '.', '_' or '-' (NumCPU), not \"all\"",
      },
    },
    resources: {
      type: 'array',
      items: {
        $ref: '#/definitions/resource',
      },
    },
  },
  definitions: {
    absPath: {
      type: 'string',
      pattern: '^/(?!(.*/)?\\.\\.(/|$))[^\\u0000-\\u001f\\u007f]*$',
      'x-message': "must be an absolute path without '..'",
    },
    name: {
      type: 'string',
      pattern: '^[A-Za-z0-9_.-]{1,63}$',
      'x-message': "must be a plain label: 1 to 63 of letters, digits, '_', '.' and '-'",
    },
    port: {
      type: 'integer',
      minimum: 1,
      maximum: 65535,
      'x-message': 'must be an integer 1..65535',
    },
  },
} as const;
